"""The open item: the passage and its spans, the question, and the side panel's forms."""
