"""Quizzes: timed assessments drawn from the question bank."""
