"""The lectures on the web: a Jupyter Book 2 (MyST) site of the lecture notebooks with their
stored outputs, in English and in each translated language (``make site``)."""
