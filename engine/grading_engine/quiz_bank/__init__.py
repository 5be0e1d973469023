"""Question templates: parameters drawn per attempt, answers computed here.

A template (content/quiz-templates/<slug>.yaml) names a function of
`answers` for its right answer and one for each misconception it can
diagnose; nothing is typed in by hand. `variants.render` turns a template
and a seed into what one learner sees, the same every time for that seed.
Pure Python, no torch: the web process renders quizzes without loading it.
Parent-only: the sandbox stage leaves it out, since its answers are
exercise answers too.
"""
