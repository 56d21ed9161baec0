"""scalable_bayes.models"""
