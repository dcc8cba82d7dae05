"""A grading run: plan, trial run, jobs on workers, collect (``pipeline.grade_course``)."""
