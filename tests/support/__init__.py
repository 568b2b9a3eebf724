"""What tests share that is not a fixture: the doubles (GitHub, chat, providers) and helpers."""
