"""Tests of bot/server/api/: the admin API, redelivery and the SARIF uploads."""
