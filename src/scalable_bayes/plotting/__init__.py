"""scalable_bayes.plotting"""
