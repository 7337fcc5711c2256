"""SQL Memory's shared core: the store interface, value codec, limits, dump format, the
validator's tables and the writer lock, written once for both backends."""
