"""The leaderboard's pages, one module per page family (apps/urls.py routes to them)."""
