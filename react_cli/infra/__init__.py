"""What every request and file goes through: HTTP, retries, deadlines, redaction, size limits,
untrusted bytes, Ctrl-C."""
