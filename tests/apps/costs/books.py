"""Price books the cost tests work their figures out at: a dated set, named, so a newer
shipped set does not move a hand-checked number (apps/costs/reference.py)."""

from apps.costs.reference import reference_book

# SemiAnalysis's August 2025 set: MI355X $1.48, B200 $1.95 owning (hyperscaler).
AUGUST_2025 = reference_book("semianalysis-2025-08").prices
