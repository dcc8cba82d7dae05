"""What a grading run leaves for the TA to read: the CSVs and the HTML summary report."""
