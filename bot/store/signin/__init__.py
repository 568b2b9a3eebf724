"""The sign-in store (`AuthStore`, bot/auth/store.py) on each backend: `sqlite.SqliteAuthStore` in
the server's SQLite file, `postgres.PostgresAuthStore` in PostgreSQL. `bot.auth.store.auth_store_for`
picks one from the database URL."""
