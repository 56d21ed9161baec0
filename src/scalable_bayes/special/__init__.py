"""scalable_bayes.special"""
