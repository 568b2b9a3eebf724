"""The audit log (docs/api.md "The audit log"): what an entry holds, who may read it, its filters
(bot/audit/log.py); its table is bot/store/, its routes bot/server/api/audit.py."""
