"""The sandbox: the trusted host starts zygotes and reads results; boot, zygote, confine and job run untrusted work."""
