"""Time: wire timestamps, time expressions in text, and the day ranges they resolve to."""
