"""The vocabulary every layer shares: records, the trajectory, methods and tasks, errors,
wording."""
