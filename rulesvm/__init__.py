"""rulesvm: a rules language and a generic interpreter for card and board games."""
