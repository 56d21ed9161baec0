"""The data sets shared by the papers: the dataset table's claim (the corpora that are a paper's own
data set have that paper's document counts). Building the corpora is library code
(:mod:`scalable_bayes.corpora`)."""
