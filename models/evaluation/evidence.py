"""The evidence methods live in `inference.evidence_choice` (the one scoring path uses them);
this name stays for `models.evaluation.evidence_cv`, its tests and scripts that import the methods from here."""
from inference.evidence_choice import *  # noqa: F401,F403
from inference.evidence_choice import (BETA, DEFAULT_METHOD, DEFAULT_SETTINGS, IDF_RECALL, METHODS,  # noqa: F401
                                       OPTION_ONLY, READER_WEIGHT, SHORT_SENTENCE, WITH_QUESTION, EvidenceChoice,
                                       SentenceIndex, Settings, idf_recall_options, occlusion_candidates, predict,
                                       similarity_scores, weighted_fbeta)
