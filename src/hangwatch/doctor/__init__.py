"""`hangwatch doctor`: preflight checks of the machine for hazards known to hang training."""
