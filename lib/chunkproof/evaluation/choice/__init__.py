"""The choice: the rule, candidates, stability over splits, the decision and its export."""
