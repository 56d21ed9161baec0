"""scalable_bayes.manifolds"""
