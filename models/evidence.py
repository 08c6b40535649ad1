"""The evidence methods live in `inference.evidence_choice` (the one scoring path uses them);
this name stays for the report and for scripts that import `models.evidence`."""
from inference.evidence_choice import *  # noqa: F401,F403
from inference.evidence_choice import (DEFAULT_METHOD, IDF_RECALL, METHODS, OPTION_ONLY, WITH_QUESTION,  # noqa: F401
                                       EvidenceChoice, SentenceIndex, idf_recall_options, predict, weighted_fbeta)
