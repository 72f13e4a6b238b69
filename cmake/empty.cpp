// Keeps every layer's object library non-empty while a layer has no sources of its own.
