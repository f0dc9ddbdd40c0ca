"""CrossCodeEval scoring: ``command`` (``score cceval``), ``scoring`` (mode dispatch), ``default`` (benchsmith's
corrected scorer), ``compat`` (the released scorer's numbers), ``common`` (records, keywords, parsers, aggregation)."""
