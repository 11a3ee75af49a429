"""Renderers of the incident model. They read findings and write to a stream; they never diagnose."""
