"""Layer 6: intervals on the answers of fitted private models, by simulating the measurements and refitting.

``query_interval`` (module ``interval``) is the public function; ``simulate`` draws data sets from a fit
and refits its estimator; ``bands`` turns the refits' answers into bands. Post-processing; docs/intervals.md.
"""

from .interval import query_interval
from .support import UnsupportedAnswerWarning

__all__ = ["UnsupportedAnswerWarning", "query_interval"]
