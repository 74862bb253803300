"""Golden transcripts: what users and editors observe of ``run -p`` and of the LSP door,
recorded once and compared on every run, so a refactor that changes behaviour is caught.
Re-record with ``python -m tests.golden.record`` only for an intended behaviour change."""
