"""The class gradebook: an SQLite store of graded submissions, merged across shards and exported."""
