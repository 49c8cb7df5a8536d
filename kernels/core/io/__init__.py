"""Reading and writing graph files: the formats and the fast text scanner under them."""
