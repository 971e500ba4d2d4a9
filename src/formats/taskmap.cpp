// task map: being written
