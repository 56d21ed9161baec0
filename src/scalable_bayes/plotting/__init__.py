"""scalable_bayes.plotting"""

from .._optional import require

require("matplotlib", "scalable_bayes.plotting")
