"""The leaderboard app: the board, run and deployment pages, compare and embeds (no models of its
own)."""

from django.apps import AppConfig


class LeaderboardConfig(AppConfig):
    name = "apps.leaderboard"
    label = "leaderboard"
