"""The choice: the rule, candidates, the user's evidence, the verdict (the rule's three steps
and how sure it is), its calibration on the study, and the export."""
