"""The job protocol: what the trusted side sends a job and what a job writes back, shared by both sides."""

MARKER_VARIABLE = "GRADER_WORKER"  # environment variable carrying a zygote's marker: its leftovers are found by it
ENDED_FILE = "ended.json"  # in a zygote's home: how its process ended, written by the template that reaped it
