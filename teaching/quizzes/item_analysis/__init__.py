"""Item analysis of a quiz: calculation (the figures, from plain responses)
and report (a quiz's attempts turned into those responses, its questions
named and its misconceptions linked, for the page, the API and the CSV)."""
