"""The session store: one append-only JSONL transcript per session under the user data folder,
grouped by project, and an index for fast listing that is rebuilt from the transcripts.

Plain data and file I/O only: the sessions package decides what to record and when; this
package knows records, files, locks and the chain that links records (``uuid`` /
``parentUuid``, as Claude Code's transcripts do). It imports nothing above the model types.
"""
