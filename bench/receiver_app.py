"""Steward's receiver as a uvicorn app for bench/receiver.py (settings from STEWARD_* variables)."""

from bot import logs
from bot.settings import Settings
from bot.web import create_app

settings = Settings()
logs.configure(settings.log_level, settings.log_format)
app = create_app(settings)
