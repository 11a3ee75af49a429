"""Before training: `hangwatch probe-data` (a stable, fast DataLoader) and `hangwatch doctor` (hazards)."""
