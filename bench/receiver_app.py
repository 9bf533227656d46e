"""Steward's receiver as a uvicorn app for bench/receiver.py (settings from STEWARD_* variables)."""

from bot.config.settings import Settings
from bot.receiver.app import create_app
from bot.telemetry import logs

settings = Settings()
logs.configure(settings.log_level, settings.log_format)
app = create_app(settings)
