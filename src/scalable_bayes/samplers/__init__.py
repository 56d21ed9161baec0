"""scalable_bayes.samplers"""
