"""The bottom layer: paths, atomic files, locks, the state records, the journal and errors.

Nothing here imports anything of plugman above `plugman.core`, prints, or exits."""
