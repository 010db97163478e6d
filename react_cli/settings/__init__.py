"""Settings: the type, its resolution (flag > environment > config file > default), validation,
URLs, environment variables."""
