"""scalable_bayes.evaluation"""
