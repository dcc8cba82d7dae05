"""The learning platform's side: a class's download imported as submission folders, and
grades and feedback written back in the platform's formats."""
