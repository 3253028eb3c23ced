"""The review desk: what is new or changed since the last review, what needs a decision, and acting on it."""
