"""scalable_bayes.inference"""
