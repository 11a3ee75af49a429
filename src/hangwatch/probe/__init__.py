"""`hangwatch probe-data`: items one by one, the num_workers=0 baseline, a matrix of DataLoader settings."""
