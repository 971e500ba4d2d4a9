// R: being written
