"""NE9xx: edits the model finds alone, where no rule ties a location (off by default: costly)."""
