"""What grading produced, as the TA's process reads it back: each folder's record, what an
LMS import learnt, and the one table of every student against every assignment that the
report and the exports both read."""
