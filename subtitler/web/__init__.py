"""Subtitles as a web page: a small HTTP server with a live event stream (no Qt here)."""
